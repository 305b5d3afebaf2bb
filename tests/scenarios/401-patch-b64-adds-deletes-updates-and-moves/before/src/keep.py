k
