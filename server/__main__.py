"""`python -m server`: serve the API on http://127.0.0.1:8080 with ./solitaire.db."""

from server.serve import main

main()
