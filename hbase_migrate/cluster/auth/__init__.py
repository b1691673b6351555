"""How clients authenticate to a cluster: its security settings and Kerberos credentials."""
