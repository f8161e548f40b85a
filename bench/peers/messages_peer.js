#!/usr/bin/env node
// messages_peer.js: the JavaScript side of the messages benchmark (issue 10).
//
//   node messages_peer.js --encode MESSAGES.json > THREAD.xml
//
// messagesToXml as the reference TypeScript agent writes it (seed 002, its
// SPEC-01 plan: src/providers/messages-to-xml.ts), on plain OpenAI-shape
// objects instead of LangChain BaseMessages (no npm dependencies): one pass
// builds the Map toolCallId -> toolName from the assistants' tool_calls; then
// system -> <event type="system">, user -> "human", assistant -> "ai" (when
// it has text) and one "tool_input" per call (its arguments JSON.parse'd and
// JSON.stringify'd, as the AIMessage's tool_calls carry them), tool ->
// "tool_output" named from the map (else "unknown"), status="success";
// iteration="0" and a call_id on every tool event; the shared escapeXml
// (five chained .replace calls, & first); the lines joined with "\n" and
// printed with a final newline, as `agentwire messages encode` prints it. A
// single user message that already is a <thread> is passed through.
"use strict";
const fs = require("fs");

const { escapeXml } = require("./escape_xml");

// Content as the reference sees it: a string, or "" for null.
function text(content) {
  return typeof content === "string" ? content : content == null ? "" : JSON.stringify(content);
}

// What LangChain's AIMessage holds for an OpenAI call's "arguments" string.
function args(call) {
  const raw = call.function.arguments;
  if (typeof raw !== "string") return raw ?? {};
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function messagesToXml(messages) {
  if (messages.length === 1 && messages[0].role === "user" && text(messages[0].content).trimStart().startsWith("<thread>"))
    return text(messages[0].content);
  const toolNames = new Map();
  for (const m of messages)
    if (m.role === "assistant" && m.tool_calls) for (const tc of m.tool_calls) if (tc.id) toolNames.set(tc.id, tc.function.name);
  const lines = ["<thread>"];
  let id = 0;
  for (const m of messages) {
    const content = text(m.content);
    if (m.role === "system" || m.role === "developer") {
      lines.push(`  <event type="system" id="${id++}" iteration="0">${escapeXml(content)}</event>`);
    } else if (m.role === "user") {
      lines.push(`  <event type="human" id="${id++}" iteration="0">${escapeXml(content)}</event>`);
    } else if (m.role === "assistant") {
      if (content) lines.push(`  <event type="ai" id="${id++}" iteration="0">${escapeXml(content)}</event>`);
      for (const tc of m.tool_calls ?? []) {
        const a = args(tc);
        const body = typeof a === "string" ? a : JSON.stringify(a);
        lines.push(
          `  <event type="tool_input" id="${id++}" name="${escapeXml(tc.function.name)}" call_id="${escapeXml(tc.id ?? "")}" iteration="0">${escapeXml(body)}</event>`,
        );
      }
    } else if (m.role === "tool") {
      const callId = m.tool_call_id ?? "";
      const name = (callId && toolNames.get(callId)) || "unknown";
      lines.push(
        `  <event type="tool_output" id="${id++}" name="${escapeXml(name)}" call_id="${escapeXml(callId)}" status="success" iteration="0">${escapeXml(content)}</event>`,
      );
    }
  }
  lines.push("</thread>");
  return lines.join("\n");
}

const argv = process.argv.slice(2);
if (argv[0] !== "--encode" || argv.length !== 2) {
  process.stderr.write("usage: node messages_peer.js --encode MESSAGES.json > THREAD.xml\n");
  process.exit(2);
}
const messages = JSON.parse(fs.readFileSync(argv[1], "utf8"));
fs.writeSync(1, messagesToXml(messages) + "\n");
