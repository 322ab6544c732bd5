"""What a grader-only module is inside the grader's sandbox: nothing (its import fails).

The sandbox mounts this file over each module that computes expected values (the checks'
judges): a notebook can neither import nor read them.
"""
raise ImportError("this module is not in the grader's sandbox: it computes the expected values, "
                  "which never enter the student's process")
