"""The database: connections, transactions, migrations, and which processes on it are alive."""
