"""Memory: the working memory of a task and the long-term store of Tips and Shortcuts."""
