"""attn-inspect's pictures (matplotlib, Agg): per-layer grids of head maps, the head-similarity
matrix, and the per-head statistics as layer x head tables."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def layer_grid_figure(maps, tokens, title, columns=4):
    """One layer's heads ([H, n, n] for one input) as a grid of heatmaps on one probability scale
    (0 to 1, its colour bar beside the grid), token labels on the first column's rows and the last
    row's columns."""
    heads = maps.shape[0]
    rows = (heads + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(3.0 * columns + 1.0, 3.0 * rows), squeeze=False,
                             layout="constrained")
    n = maps.shape[-1]
    image = None
    for h in range(rows * columns):
        ax = axes[h // columns][h % columns]
        if h >= heads:
            ax.axis("off")
            continue
        image = ax.imshow(maps[h], cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest")
        ax.set_title(f"head {h}", fontsize=9)
        if n > 48:  # too many to read: positions only
            ax.tick_params(labelsize=6)
            continue
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels(tokens if h // columns == rows - 1 else [], rotation=90, fontsize=6)
        ax.set_yticklabels(tokens if h % columns == 0 else [], fontsize=6)
    fig.colorbar(image, ax=axes, shrink=0.6, label="probability")
    fig.suptitle(title, fontsize=11)
    return fig


def layer_grid(path, maps, tokens, title, columns=4, dpi=60):
    """layer_grid_figure, saved as path."""
    fig = layer_grid_figure(maps, tokens, title, columns)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def similarity_matrix(path, similarity, names, heads_per_layer, title, dpi=60):
    """The [N, N] Jensen-Shannon divergence matrix, lines between layers."""
    count = similarity.shape[0]
    fig, ax = plt.subplots(figsize=(8, 7))
    image = ax.imshow(similarity, cmap="magma_r", vmin=0.0, vmax=1.0, interpolation="nearest")
    for edge in range(heads_per_layer, count, heads_per_layer):
        ax.axhline(edge - 0.5, color="white", linewidth=0.8)
        ax.axvline(edge - 0.5, color="white", linewidth=0.8)
    ticks = list(range(0, count, heads_per_layer))
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xticklabels([names[t] for t in ticks], rotation=90, fontsize=7)
    ax.set_yticklabels([names[t] for t in ticks], fontsize=7)
    fig.colorbar(image, ax=ax, label="Jensen-Shannon divergence (bits)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def stat_tables(path, tables, title, dpi=60):
    """Several [L, H] tables side by side ({label: array}), each with its own color scale."""
    fig, axes = plt.subplots(1, len(tables), figsize=(3.4 * len(tables), 3.2), squeeze=False)
    for ax, (label, table) in zip(axes[0], tables.items()):
        image = ax.imshow(table, cmap="viridis", aspect="auto", interpolation="nearest")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("head", fontsize=8)
        ax.set_ylabel("layer", fontsize=8)
        ax.set_xticks(range(table.shape[1]))
        ax.set_yticks(range(table.shape[0]))
        ax.tick_params(labelsize=6)
        fig.colorbar(image, ax=ax, fraction=0.046)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
