"""The wiring: shared steps joined into the tool loop and the ReAct loop, compiled into a
checked graph whose writes are durable and whose resumes reach their interrupts."""
