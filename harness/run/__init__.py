"""What one run is made of: its configuration (`config`) and the context its parts share
(`context`)."""
