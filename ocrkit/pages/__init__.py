"""A read page and what is made of it: the Page/Line/Word records (document), reading order, word
boxes, the not-text filter, and every output format (txt, JSON, hOCR, ALTO, PAGE, overlay, searchable PDF)."""
