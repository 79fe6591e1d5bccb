"""Path attachments of a trace, served only from under the configured attachments root."""
