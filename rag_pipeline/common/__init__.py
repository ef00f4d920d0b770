"""What every layer uses: times, YAML reading, the collector pause around loads, S3 clients."""
