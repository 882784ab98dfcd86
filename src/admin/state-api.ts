// GET /__sandbox/state: the state as a file to move or keep (store/state-export.ts); PUT: the state
// replaced by such a file, all of it or the one merchant it holds. A file is read whole and checked
// before anything changes: a refused file (its line and the reason) leaves the state as it was.
import express, { type Request, type Response } from "express";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import { readStateFile, StateFileError } from "../store/state-export.js";
import type { On } from "./call-handlers.js";
import { allRequired, currentStateFile, putBack } from "./snapshots-api.js";
import { answerJson, problem, queryText } from "./shared.js";

/** A state file of 10,000 payments is about 15 MB. */
const STATE_FILE_LIMIT = "64mb";
const readFile = express.raw({ type: () => true, limit: STATE_FILE_LIMIT });

export function stateApi(server: Deps, on: On): void {
  on("exportState", async (req: Request, res: Response) => {
    const deps = depsOf(res, server);
    const merchant = queryText(req, "merchant_id") ?? null;
    if (merchant !== null && !deps.store.records.merchant(merchant)) return problem(res, 404, "merchant_not_found", `no merchant ${merchant}`);
    const file = await currentStateFile(deps, merchant);
    res.setHeader("Content-Disposition", `attachment; filename="sandgate-state${merchant ? `-${merchant.replace(/[^\w.-]/g, "_")}` : ""}.ndjson"`);
    res.type("application/x-ndjson; charset=utf-8").send(file);
  });

  on(
    "importState",
    (req, res, next) =>
      readFile(req, res, (err?: unknown) => {
        if (!err) return next();
        const status = (err as { status?: number }).status;
        if (status === 413) return problem(res, 413, "body_too_large", `the file is larger than ${STATE_FILE_LIMIT.toUpperCase()}`);
        problem(res, 400, "invalid_state_file", `the body cannot be read: ${(err as Error).message}`);
      }),
    async (req, res) => {
      const deps = depsOf(res, server);
      const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      let file;
      try {
        file = readStateFile(bytes.toString("utf8"));
        if (file.header.merchant === null && queryText(req, "all") !== "true")
          return answerJson(res, allRequired("the file", "add ?all=true (sandgate ctl state import <file> --all)"), () => undefined);
        await putBack(deps, file);
      } catch (err) {
        if (err instanceof StateFileError) return problem(res, 400, "invalid_state_file", err.message);
        throw err;
      }
      res.json({ merchant: file.header.merchant, records: Object.fromEntries(Object.entries(file.records).map(([c, list]) => [c, list.length])) });
    },
  );
}
