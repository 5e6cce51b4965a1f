"""Import-time benchmark."""
