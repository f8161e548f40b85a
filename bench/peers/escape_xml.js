// escapeXml as the reference agent writes it (src/xml-serializer.ts), shared
// by the peers that follow its serializers (thread_peer.js and, as the
// reference's messagesToXml reuses it, messages_peer.js): five chained
// .replace calls, & first.
"use strict";

function escapeXml(text) {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

module.exports = { escapeXml };
