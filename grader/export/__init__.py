"""What the kit exports: the students' page (web.py) and Gradescope's autograder zip (gradescope.py)."""
