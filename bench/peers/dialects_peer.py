#!/usr/bin/env python3
"""The peer of the dialects benchmark (issue 18): vLLM's tool parsers, as
their published logic reads a reply, in plain Python.

vLLM itself cannot be installed here (PyPI is out of reach), so this file
follows the extraction each of its parsers performs on a complete reply
(extract_tool_calls, not the streaming path): the same regular expressions
over the same markers, json.loads / raw_decode / ast for the arguments, and
the schema-driven conversion of string parameters where vLLM does it. It is
written for this benchmark (not vLLM's code) and keeps only what a
non-streaming extraction needs: no OpenAI protocol objects, no tokenizer.

Like vLLM's extract_tool_calls, every parse returns its result as the
protocol objects vLLM builds: pydantic models ToolCall(type, id,
function=FunctionCall(name, arguments)) inside ExtractedToolCallInformation
(tools_called, tool_calls, content), the arguments written back with
json.dumps(..., ensure_ascii=False) and the id made from uuid4 as vLLM's
make_tool_call_id does. Where pydantic is not installed (Debian:
python3-pydantic), plain dataclasses stand in, which costs less.

Dialects vLLM has no parser for (function_calls, fenced) get the same kind
of regular-expression parser. gpt-oss's parser in vLLM decodes Harmony
from token ids with the openai_harmony library (Rust); here it is a regular
expression over the text, which is cheaper than the real thing.

    dialects_peer.py VECTORS_DIR DIALECT...

prints "py.NAME.mbps", "py.NAME.calls" lines: reply bytes per second over
the replies of VECTORS_DIR/NAME.json, the best of 3 rounds of at least
0.3 s each, and the calls found."""
import ast
import json
import re
import sys
import time
import uuid

try:
    from pydantic import BaseModel, Field

    class FunctionCall(BaseModel):
        name: str
        arguments: str

    class ToolCall(BaseModel):
        id: str = Field(default_factory=lambda: "chatcmpl-tool-" + uuid.uuid4().hex)
        type: str = "function"
        function: FunctionCall

    class ExtractedToolCallInformation(BaseModel):
        tools_called: bool
        tool_calls: list
        content: str | None = None

    PROTOCOL = "pydantic %s" % __import__("pydantic").VERSION
except ImportError:
    from dataclasses import dataclass, field

    @dataclass
    class FunctionCall:
        name: str
        arguments: str

    @dataclass
    class ToolCall:
        function: FunctionCall
        type: str = "function"
        id: str = field(default_factory=lambda: "chatcmpl-tool-" + uuid.uuid4().hex)

    @dataclass
    class ExtractedToolCallInformation:
        tools_called: bool
        tool_calls: list
        content: str = None

    PROTOCOL = "dataclasses (pydantic not installed)"


def result(calls, text):
    """What vLLM's extract_tool_calls returns for calls found in text."""
    if not calls:
        return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=text)
    tool_calls = [ToolCall(function=FunctionCall(name=name, arguments=json.dumps(args, ensure_ascii=False)))
                  for name, args in calls]
    return ExtractedToolCallInformation(tools_called=True, tool_calls=tool_calls, content=None)

# ---- schema-driven conversion (qwen3_coder, glm45, minimax) ----------------------


def param_type(tools, name, key):
    for t in tools:
        if t.get("name") == name:
            props = (t.get("input_schema") or {}).get("properties") or {}
            return (props.get(key) or {}).get("type", "string")
    return "string"


def convert(value, ptype):
    if ptype in ("string", "str", "text"):
        return value
    if value.lower() == "null":
        return None
    if ptype in ("integer", "int"):
        try:
            return int(value)
        except ValueError:
            return value
    if ptype in ("number", "float"):
        try:
            f = float(value)
            return int(f) if f.is_integer() and "." not in value else f
        except ValueError:
            return value
    if ptype in ("boolean", "bool"):
        return value.lower() == "true"
    try:
        return json.loads(value)
    except ValueError:
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value


# ---- the parsers ------------------------------------------------------------------------

HERMES = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)


def hermes(text, tools):
    if "<tool_call>" not in text:
        return []
    calls = []
    for m in HERMES.findall(text):
        try:
            obj = json.loads(m[0] if m[0] else m[1])
        except ValueError:
            return []
        calls.append((obj["name"], obj.get("arguments", {})))
    return calls


Q_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*?)$", re.DOTALL)
Q_FUNC = re.compile(r"<function=(.*?)</function>|<function=(.*)$", re.DOTALL)
Q_PARAM = re.compile(r"<parameter=(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|$)", re.DOTALL)


def qwen3_coder(text, tools):
    if "<function=" not in text:
        return []
    raw = [m[0] or m[1] for m in Q_CALL.findall(text)] or [text]
    calls = []
    for block in raw:
        for f in Q_FUNC.findall(block):
            body = f[0] or f[1]
            name, _, rest = body.partition(">")
            args = {}
            for p in Q_PARAM.findall(rest):
                key, _, value = p.partition(">")
                value = value.strip("\n")
                args[key] = convert(value, param_type(tools, name, key))
            calls.append((name.strip(), args))
    return calls


GLM_CALL = re.compile(r"<tool_call>.*?</tool_call>", re.DOTALL)
GLM_DETAIL = re.compile(r"<tool_call>([^\n<]*)(.*)</tool_call>", re.DOTALL)
GLM_ARG = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)


def glm45(text, tools):
    calls = []
    for block in GLM_CALL.findall(text):
        d = GLM_DETAIL.search(block)
        if not d:
            continue
        name = d.group(1).strip()
        args = {k.strip(): convert(v, param_type(tools, name, k.strip())) for k, v in GLM_ARG.findall(d.group(2))}
        calls.append((name, args))
    return calls


def granite(text, tools):
    s = text.strip()
    for prefix in ("<|tool_call|>", "<tool_call>"):
        i = s.find(prefix)
        if i >= 0:
            s = s[i + len(prefix):]
            break
    else:
        return []
    try:
        objs, _ = json.JSONDecoder().raw_decode(s.strip())
    except ValueError:
        return []
    if isinstance(objs, dict):
        return []
    return [(o["name"], o.get("arguments", {})) for o in objs]


LLAMA_BUILTIN = re.compile(r"([a-zA-Z_]\w*)\.call\((.*)\)", re.DOTALL)


def llama3(text, tools):
    s = text.replace("<|python_tag|>", "").replace("<|eom_id|>", "").replace("<|eot_id|>", "")
    m = re.search(r"<function=([^>]+)>(.*?)</function>", s, re.DOTALL)
    if m:
        args = json.loads(m.group(2))
        return [(m.group(1), {k: convert(v, param_type(tools, m.group(1), k)) if isinstance(v, str) else v
                              for k, v in args.items()})]
    b = LLAMA_BUILTIN.search(s)
    if b and not s.lstrip().startswith(("{", "[")):
        node = ast.parse(b.group(0).strip(), mode="eval").body
        return [(b.group(1), {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords})]
    dec = json.JSONDecoder()
    calls, i = [], s.find("{")
    start = s.find("[")
    if 0 <= start < i and s[start:].lstrip("[ \n").startswith("{"):
        try:
            objs, _ = dec.raw_decode(s[start:])
            return [(o["name"], o.get("arguments", o.get("parameters", {}))) for o in objs]
        except ValueError:
            pass
    while 0 <= i < len(s):
        try:
            obj, end = dec.raw_decode(s, i)
        except ValueError:
            break
        if "name" in obj:
            calls.append((obj["name"], obj.get("parameters", obj.get("arguments", {}))))
        i = s.find("{", end)
    return calls


PYTHONIC = re.compile(
    r"\[([a-zA-Z]+\w*\(([a-zA-Z]+\w*=.*,\s*)*([a-zA-Z]+\w*=.*\s)?\),\s*)*"
    r"([a-zA-Z]+\w*\(([a-zA-Z]+\w*=.*,\s*)*([a-zA-Z]+\w*=.*\s*)?\)\s*)+\]",
    re.DOTALL)


def pythonic(text, tools):
    s = text.strip()
    if not PYTHONIC.match(s):
        return []
    module = ast.parse(s)
    calls = []
    for call in module.body[0].value.elts:
        calls.append((call.func.id, {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}))
    return calls


MISTRAL_V11 = re.compile(r"([a-zA-Z0-9_.-]+)(?:\[ARGS\])?(\{.*\})", re.DOTALL)


def mistral(text, tools):
    if "[TOOL_CALLS]" not in text:
        return []
    calls = []
    for part in text.split("[TOOL_CALLS]")[1:]:
        part = part.strip()
        if part.startswith("["):
            try:
                objs = json.loads(part)
            except ValueError:
                try:
                    objs, _ = json.JSONDecoder().raw_decode(part)
                except ValueError:
                    continue
            calls += [(o["name"], o.get("arguments", {})) for o in objs]
        else:
            m = MISTRAL_V11.match(part)
            if m:
                calls.append((m.group(1), json.loads(m.group(2))))
    return calls


DS_V3 = re.compile(r"<｜tool▁call▁begin｜>(?P<type>.*)<｜tool▁sep｜>(?P<name>.*)\n```json\n(?P<args>.*)\n```<｜tool▁call▁end｜>")
DS_V31 = re.compile(r"<｜tool▁call▁begin｜>(?P<name>.*?)<｜tool▁sep｜>(?P<args>.*?)<｜tool▁call▁end｜>", re.DOTALL)


def deepseek(text, tools):
    if "<｜tool▁calls▁begin｜>" not in text:
        return []
    calls = []
    for m in DS_V3.finditer(text):
        try:
            calls.append((m.group("name"), json.loads(m.group("args"))))
        except ValueError:
            pass
    if calls:
        return calls
    for m in DS_V31.finditer(text):
        try:
            calls.append((m.group("name"), json.loads(m.group("args"))))
        except ValueError:
            pass
    return calls


KIMI = re.compile(
    r"<\|tool_call_begin\|>\s*(?P<id>[^<]+:\d+)\s*<\|tool_call_argument_begin\|>\s*"
    r"(?P<args>(?:(?!<\|tool_call_begin\|>).)*?)\s*<\|tool_call_end\|>", re.DOTALL)


def kimi_k2(text, tools):
    if "<|tool_calls_section_begin|>" not in text:
        return []
    calls = []
    for m in KIMI.finditer(text):
        name = m.group("id").split(":")[0].split(".")[-1]
        calls.append((name, json.loads(m.group("args"))))
    return calls


INV_BLOCK = {"minimax": re.compile(r"<minimax:tool_call>(.*?)</minimax:tool_call>", re.DOTALL),
             "function_calls": re.compile(r"<function_calls>(.*?)</function_calls>", re.DOTALL)}
INVOKE = re.compile(r"<invoke name=(.*?)</invoke>", re.DOTALL)
PARAM = re.compile(r"<parameter name=(.*?)</parameter>", re.DOTALL)


def strip_name(s):
    return s.strip().strip("\"'")


def invoke(kind):
    def parse(text, tools):
        calls = []
        for block in INV_BLOCK[kind].findall(text):
            for inv in INVOKE.findall(block):
                head, _, body = inv.partition(">")
                name = strip_name(head.split()[0] if head.split() else head)
                args = {}
                for p in PARAM.findall(body):
                    k, _, v = p.partition(">")
                    key = strip_name(k.split()[0] if k.split() else k)
                    args[key] = convert(v.strip("\n"), param_type(tools, name, key))
                calls.append((name, args))
        return calls
    return parse


HARMONY = re.compile(r"to=functions\.([\w.-]+).*?<\|message\|>(.*?)(?:<\|call\|>|<\|end\|>|$)", re.DOTALL)


def harmony(text, tools):
    calls = []
    for m in HARMONY.finditer(text):
        try:
            calls.append((m.group(1), json.loads(m.group(2)) if m.group(2).strip() else {}))
        except ValueError:
            pass
    return calls


FENCE = re.compile(r"```(?:json)?\n(.*?)```", re.DOTALL)


def fenced(text, tools):
    calls = []
    for body in FENCE.findall(text):
        try:
            obj = json.loads(body)
        except ValueError:
            continue
        if isinstance(obj, dict) and "tool_calls" in obj:
            obj = obj["tool_calls"]
        for o in obj if isinstance(obj, list) else [obj]:
            if isinstance(o, dict) and "name" in o:
                args = o.get("arguments", o.get("parameters", o.get("args", {})))
                calls.append((o["name"], json.loads(args) if isinstance(args, str) else args))
    return calls


PARSERS = {"hermes": hermes, "qwen3_coder": qwen3_coder, "glm45": glm45, "granite": granite, "llama3": llama3,
           "pythonic": pythonic, "mistral": mistral, "deepseek": deepseek, "kimi_k2": kimi_k2,
           "minimax": invoke("minimax"), "function_calls": invoke("function_calls"), "harmony": harmony,
           "fenced": fenced}


def safe(parse, text, tools):
    # vLLM's parsers catch their exceptions and return the text as content
    try:
        calls = parse(text, tools)
    except Exception:  # noqa: BLE001
        calls = []
    return result(calls, text)


def main():
    vectors, names = sys.argv[1], sys.argv[2:]
    print("py.version %s" % sys.version.split()[0])
    print("py.protocol %s" % PROTOCOL.replace(" ", "_"))
    for name in names:
        with open("%s/%s.json" % (vectors, name), encoding="utf-8") as f:
            vecs = json.load(f)
        replies = [(v["reply"], v["tools"]) for v in vecs]
        nbytes = sum(len(r.encode("utf-8")) for r, _ in replies)
        parse = PARSERS[name]
        calls = sum(len(safe(parse, r, t).tool_calls) for r, t in replies)
        best = None
        for _ in range(3):
            reps, t0 = 0, time.process_time()
            while True:
                for r, t in replies:
                    safe(parse, r, t)
                reps += 1
                el = time.process_time() - t0
                if el >= 0.3:
                    break
            per = el / reps
            best = per if best is None or per < best else best
        print("py.%s.calls %d\npy.%s.mbps %.3f" % (name, calls, name, nbytes / best / 1e6))


if __name__ == "__main__":
    main()
