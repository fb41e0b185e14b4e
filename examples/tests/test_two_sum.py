"""Frozen tests for the two_sum example: the answer uses 1-based positions."""

import pytest
from two_sum import two_sum


def test_basic_pair():
    assert two_sum([2, 7, 11, 15], 9) == [1, 2]


def test_pair_later_in_the_list():
    assert two_sum([3, 2, 4], 6) == [2, 3]


def test_same_value_twice():
    assert two_sum([3, 3], 6) == [1, 2]


def test_negative_numbers():
    assert two_sum([-1, -2, -3, -4, -5], -8) == [3, 5]


def test_no_solution_raises():
    with pytest.raises(ValueError):
        two_sum([1, 2, 3], 100)
