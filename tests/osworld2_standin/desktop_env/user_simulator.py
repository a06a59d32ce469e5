"""The simulated user: answers the agent's question from the task's private facts."""

from desktop_env.evaluators import model_client


class LLMUserSimulator:
    def __init__(self, config):
        self.persona = config["persona"]

    def respond(self, question):
        messages = [
            {"role": "system", "content": self.persona},
            {"role": "user", "content": question},
        ]
        return model_client.chat(messages, 64, "OSWORLD_USER_SIM", "OSWORLD_EVAL_MODEL")
