# A lead agent file with one sub-agent, both on recorded models, for the
# shell tests that run agent files: write_agent_tree DIR CALL FINAL writes
# DIR/lead.md (model replay:lead.jsonl, sub-agent helpers/helper.md) and
# DIR/helpers/helper.md (answers "forty-two" natively to "the question").
# CALL is the lead's tag calling agent__helper with {"task": "the question"}
# and FINAL its final report, both as JSON string contents (each test has
# its own nonce). Sourced by the tests.
write_agent_tree() {
    mkdir -p "$1/helpers"
    cat >"$1/lead.md" <<'EOF'
---
name: lead
model: replay:lead.jsonl
agents: [helpers/helper.md]
---
You lead.
EOF
    cat >"$1/helpers/helper.md" <<'EOF'
---
name: helper
description: Finds answers.
model: replay:helper.jsonl
transport: native
---
You help.
EOF
    printf '%s\n' '{"tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": "{\"status\": \"success\", \"content\": \"forty-two\"}"}], "expect": ["the question"]}' >"$1/helpers/helper.jsonl"
    printf '{"text": "%s", "expect": ["You lead.", "agent__helper", "Finds answers."]}\n{"text": "%s", "expect": ["forty-two"]}\n' \
        "$2" "$3" >"$1/lead.jsonl"
}
