"""The `kashgar` console command."""
