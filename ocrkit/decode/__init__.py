"""Reading token ids out of a recognizer's outputs: numpy only, shared by the torch and ONNX backends.

One implementation of CTC decoding, joint CTC/attention rescoring and the greedy token budget, so the two
backends cannot drift apart; each backend only runs its own networks. Never imports torch.
"""
