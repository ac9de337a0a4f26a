# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of the mm-kunit docs; "make docs" builds them with
# "sphinx-build -W -b html docs build/docs".  Kept to what Debian's
# python3-sphinx has on its own: no extensions, the default theme.

project = 'mm-kunit'
author = 'mm-kunit'
copyright = 'the mm-kunit authors; GPL-2.0'

extensions = []
root_doc = 'index'
source_suffix = '.rst'
exclude_patterns = ['_build']

# As in the kernel's Documentation/conf.py: literal blocks are commands and
# logs, not Python.
highlight_language = 'none'

html_theme = 'alabaster'
html_title = 'mm-kunit'
html_show_sourcelink = False
