import { describe, expect, it } from "vitest";
import { mapE2BResult } from "../src/map-e2b-result.js";

describe("mapE2BResult with a result as the @e2b/code-interpreter SDK builds it from a server line", () => {
  it("keeps the server's extra MIME types (only in Result.raw), skips null fields and keeps unknown top-level ones", () => {
    // The server sends every field (null when absent) and unknown MIME types under "extra"; the SDK copies the line
    // to `raw`, the known fields to properties, and only unknown top-level fields to its own `extra`.
    const line = { text: "Plot", html: null, png: null, json: [1, 2], extra: { "application/vnd.plotly.v1+json": { data: [] } }, future_field: "x" };
    const mapped = mapE2BResult({ isMainResult: false, text: "Plot", json: [1, 2], raw: line, extra: { future_field: "x" } });
    expect(mapped).toEqual({
      isMainResult: false,
      data: {
        "text/plain": "Plot",
        "application/json": "[1,2]",
        "application/vnd.plotly.v1+json": '{"data":[]}',
        "application/vnd.e2b.future_field": "x",
      },
    });
  });

  it("ignores a raw extra that is not an object", () => {
    expect(mapE2BResult({ isMainResult: true, text: "1", raw: { extra: ["not", "formats"] } })).toEqual({
      isMainResult: true,
      data: { "text/plain": "1" },
    });
  });
});
