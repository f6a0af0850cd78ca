"""codebot's command line: parse, call into core and mcpbridge, render. No business logic."""
