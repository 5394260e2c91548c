from setuptools import setup
setup(name='meteor')
