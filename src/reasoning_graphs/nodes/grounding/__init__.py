"""Grounding: which claims of a final answer rest on what the tools returned, and how a
reply's words are compared with texts (runs of words, look-alike letters folded)."""
