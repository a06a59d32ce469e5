"""What a finished run or suite adds up to: summaries and the HTML report."""
