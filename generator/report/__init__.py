"""The Report: its data, its JSON form (`difforacle.report/1`, checked against the shipped schema),
its Markdown, and the files it is written to."""
