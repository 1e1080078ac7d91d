"""One blueprint per resource."""

from flask import Flask

from . import cards, health, jobs, levels, rating, reviews, rules, suggest


def register(app: Flask) -> None:
    for module in (suggest, reviews, jobs, rules, levels, cards, health, rating):
        app.register_blueprint(module.bp)
