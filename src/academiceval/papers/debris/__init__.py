"""Detectors and repairs of debris in paper text, one module per source family (`pdf`, `ar5iv`, `mathml`,
`latex`, `layout`); `papers.clean` puts them together and is what the rest of the project calls."""
