// Addresses of the payer-facing pages a payment can send its payer to.
export type PageKind = "apm" | "3ds" | "checkout";

export const pageUrl = (baseUrl: string, kind: PageKind, pageId: string) => `${baseUrl.replace(/\/$/, "")}/pay/${kind}/${pageId}`;
