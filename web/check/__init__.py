"""`/check`: an uploaded file read with the CLI's rules, its damaged records listed, nothing stored."""
