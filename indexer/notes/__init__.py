"""Notes: reading Markdown, front matter, chunking, Chinese segmentation, appending memories, privacy."""
