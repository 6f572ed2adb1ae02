"""The fixed sentences of the MiniLM report (docs/minilm_heads.md): short and long, questions,
punctuation, numbers, non-ASCII, near-paraphrases."""

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing the violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
    "Someone in a gorilla costume is playing a set of drums.",
    "How do I reset my password?",
    "What is the capital of France?",
    "Paris is the capital and most populous city of France.",
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world!",
    "Attention is all you need; or is it?",
    "It costs $3.50 (plus tax) at 9:30 a.m., e-mail me: info@example.com.",
    "Naïve café owners in Zürich serve crème brûlée.",
    "The mitochondria is the powerhouse of the cell, converting nutrients into adenosine triphosphate.",
    "Despite the heavy rain that had been falling since early morning, the marathon went ahead as "
    "planned and thousands of runners crossed the finish line.",
    "Why?",
]
