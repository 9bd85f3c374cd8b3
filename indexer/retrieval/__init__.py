"""Search in stages: the query analysed once, candidates collected, fused, adjusted and cut; recall on top."""
