"""The Report: its data, its JSON form (`difforacle.report/1`, checked against the shipped schema),
and the files it is written to. Its Markdown is the front ends' (`difforacle.bot`), from the JSON."""
