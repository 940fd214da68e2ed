"""The small shared pieces every layer may use: errors, config loading, the argument parser, lazy
exports, the install extras, thread settings."""
