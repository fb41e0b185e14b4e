"""Bar chart of sales per product from sales.csv: writes chart.png and summary.json."""

import json

import matplotlib.pyplot as plt
import pandas as pd

sales = pd.read_csv("sales.csv")
totals = sales.groupby("product")["sales"].sum().sort_values(ascending=False)

fig, ax = plt.subplots(figsize=(6, 4))
totals.plot.bar(ax=ax, color="#4c72b0")
ax.set_title("Sales per product")
ax.set_ylabel("units sold")
fig.tight_layout()
fig.savefig("chart.png", dpi=100)

with open("summary.json", "w") as handle:
    json.dump({"total": int(totals.sum()), "products": totals.to_dict()}, handle)
print("done")
