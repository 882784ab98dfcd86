// The published JSON Schema of scenario files, generated from the zod definition.
import { z } from "zod";
import { scenarioFileSchema } from "./schema.js";

export function scenarioSchemaJson(): string {
  const schema = z.toJSONSchema(scenarioFileSchema, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
  const published = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://sandgate.dev/scenario.schema.json",
    title: "Sandgate scenario",
    description: "Ordered rules: the first whose `when` matches decides the answer (`then`).",
    ...schema,
  };
  return `${JSON.stringify(published, null, 2)}\n`;
}
