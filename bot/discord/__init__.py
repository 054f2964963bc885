"""The Discord adapter: settings, the HTTP interactions door, rendering, REST and delivery."""
