"""From candidate differences to reported ones: confirmed in fresh processes, minimized, rendered as
pytest tests, reproduced by pytest on both commits, and merged."""
