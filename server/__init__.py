"""Russian Solitaire game server."""
