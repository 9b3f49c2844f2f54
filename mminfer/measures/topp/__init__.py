"""The rule `topp`: topp.json and topp_detail.json: the candidates top-p leaves."""
