import { InvalidArgumentError } from "@sbx/core";

const NODE_ENCODINGS: Record<string, BufferEncoding> = {
  "utf-8": "utf8",
  utf8: "utf8",
  latin1: "latin1",
  "iso-8859-1": "latin1",
  ascii: "ascii",
  "utf-16le": "utf16le",
  utf16le: "utf16le",
};

/** The Node encoding for an AI SDK encoding label; refuses labels it cannot encode rather than writing something else. */
export function nodeEncoding(label: string | undefined): BufferEncoding {
  const encoding = NODE_ENCODINGS[(label ?? "utf-8").toLowerCase()];
  if (!encoding)
    throw new InvalidArgumentError({
      field: "encoding",
      message: `Unsupported text encoding ${JSON.stringify(label)}: use utf-8, latin1, ascii or utf-16le.`,
    });
  return encoding;
}
