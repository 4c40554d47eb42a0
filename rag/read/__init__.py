"""Reading a question: its words, cues, spelling and topicality become a query plan; input bounds."""
