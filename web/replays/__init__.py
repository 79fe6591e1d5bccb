"""Starting replays: the run service every slice queues through, and the models a Re-run form offers."""
