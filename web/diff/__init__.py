"""The diff page: two providers' bodies side by side, every change with its likely cause."""
