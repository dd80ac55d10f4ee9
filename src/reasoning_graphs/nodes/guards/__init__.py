"""Guards: the question's budgets, the loop guards that see rounds going nowhere, the
advice they give the model, and the honest ending of a question that stopped short."""
