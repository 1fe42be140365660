"""The corpus PDFs the papers tests parse (once per session, see conftest.py)."""

# A mix of layouts: NeurIPS single column with LaTeX sources (1706), ICLR capitals (2010), ACM two-column
# with letter appendices (2203), AMS plain headings (1504), IEEE roman numbering (2312), physics without a
# References heading (1111), ACL venue version (ELMo), an old two-column systems paper (MapReduce),
# a journal version with a table of contents (JCAP), an ACL 2004 hanging-indent reference list (mono04).
SUBSET = [
    "1706.03762v7.pdf",
    "2010.11929v2.pdf",
    "2203.00130v1.pdf",
    "1504.06236v2.pdf",
    "2312.10997v5.pdf",
    "1111.2011v2.pdf",
    "naacl2018_ELMo.pdf",
    "osdi2004_MapReduce.pdf",
    "0807.3577_JCAP_version.pdf",
    "emnlp2004_quirk_mono04.pdf",
]
