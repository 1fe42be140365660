"""The module inspect_ai loads through the `inspect_ai` entry point: importing it registers our tasks."""

from academiceval.integrations.inspect.tasks import abstract, citation_cloze, introduction, related_work, title

__all__ = ["abstract", "citation_cloze", "introduction", "related_work", "title"]
