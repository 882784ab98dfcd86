<?php

namespace Shop;

/** The gateway's answer cannot be trusted (its signature is not ours) or is not what was asked. */
final class GatewayError extends \RuntimeException
{
}
