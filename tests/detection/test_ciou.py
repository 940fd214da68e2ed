import pytest
import torch
from torchvision.ops import complete_box_iou_loss

from ocrkit.detection import loss as L
from ocrkit.detection.ciou import ciou, ciou_loss
from ocrkit.detection.factory import create_detector


def random_boxes(n, gen):
    xy = torch.rand(n, 2, generator=gen)
    wh = torch.rand(n, 2, generator=gen) * 0.5 + 0.01
    return torch.cat([xy, xy + wh], 1)


def test_ciou_matches_torchvision_on_valid_boxes():
    gen = torch.Generator().manual_seed(0)
    a, b = random_boxes(200, gen), random_boxes(200, gen)
    expected = complete_box_iou_loss(a, b, reduction="none", eps=1e-7)
    torch.testing.assert_close(ciou_loss(a, b), expected, atol=1e-5, rtol=1e-5)
    # pairwise form agrees with the element-wise one
    pair = ciou(a[:5, None], b[None, :7])
    torch.testing.assert_close(pair[2, 3], ciou(a[2], b[3]))


def test_ciou_finite_loss_and_grads_on_degenerate_boxes():
    pred = torch.tensor(
        [[0.2, 0.2, 0.2, 0.2], [0.1, 0.3, 0.5, 0.3], [0.0, 0.0, 0.0, 0.4], [0.3, 0.3, 0.6, 0.5]],
        requires_grad=True,
    )
    target = torch.tensor(
        [[0.2, 0.2, 0.4, 0.3], [0.1, 0.3, 0.5, 0.35], [0.0, 0.0, 0.1, 0.4], [0.3, 0.3, 0.3, 0.3]]
    )
    assert torch.isnan(complete_box_iou_loss(pred.detach(), target)).any()  # why we need our own
    loss = ciou_loss(pred, target).sum()
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(pred.grad).all()
    identical = ciou_loss(target[:2], target[:2])
    torch.testing.assert_close(identical, torch.zeros(2), atol=1e-5, rtol=0)


def tiny_labels():
    return [
        {
            "class_labels": torch.zeros(3, dtype=torch.long),
            "boxes": torch.tensor([[0.3, 0.2, 0.4, 0.05], [0.5, 0.5, 0.6, 0.06], [0.4, 0.8, 0.5, 0.04]]),
        }
    ]


def tiny_detector(arch, size, encoder_positives=1):
    torch.manual_seed(0)
    return create_detector(
        arch,
        size,
        num_queries=10,
        num_denoising=6,
        encoder_positives=encoder_positives,
        decoder_layers=2,
        encoder_hidden_dim=32,
        d_model=32,
        decoder_in_channels=[32] * (2 if arch == "dfine" else 3),
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
    )


@pytest.mark.parametrize("arch,size", [("dfine", "n"), ("rtdetr_v2", "r18")])
def test_model_trains_with_ciou_not_giou(arch, size, monkeypatch):
    model = tiny_detector(arch, size)
    calls = []
    real = L.ciou_loss

    def spy(pred, target):
        calls.append((pred.detach().clone(), target.detach().clone()))
        return real(pred, target)

    monkeypatch.setattr(L, "ciou_loss", spy)
    out = model(pixel_values=torch.rand(1, 3, 64, 64), labels=tiny_labels())
    assert not any("giou" in k for k in out.loss_dict)
    assert out.loss_dict["loss_ciou"] > 0
    # the main loss term is exactly weight × mean CIoU loss of the matched boxes
    criterion = model.loss_function.criterion
    assert isinstance(criterion.matcher, L.CIoUHungarianMatcher)
    main_pred, main_target = calls[0]
    assert len(main_pred) == 3
    expected = criterion.weight_dict["loss_ciou"] * real(main_pred, main_target).sum() / 3
    torch.testing.assert_close(out.loss_dict["loss_ciou"].detach(), expected)
    out.loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


def test_matcher_prefers_ciou_over_l1_ties():
    # two predictions equally far in L1 from the target; CIoU prefers the one with the right aspect
    config = create_detector("dfine", "n", num_queries=4, decoder_layers=1).config
    config.matcher_class_cost, config.matcher_bbox_cost = 0.0, 0.0
    matcher = L.CIoUHungarianMatcher(config)
    pred = torch.tensor([[[0.5, 0.5, 0.1, 0.6], [0.5, 0.5, 0.6, 0.1]]])
    target = [
        {"class_labels": torch.zeros(1, dtype=torch.long), "boxes": torch.tensor([[0.5, 0.5, 0.5, 0.1]])}
    ]
    ((rows, cols),) = matcher({"logits": torch.zeros(1, 2, 1), "pred_boxes": pred}, target)
    assert rows.tolist() == [1] and cols.tolist() == [0]


def test_repeat_targets_caps_at_the_proposals():
    one = {"class_labels": torch.zeros(3, dtype=torch.long), "boxes": torch.rand(3, 4)}
    empty = {"class_labels": torch.zeros(0, dtype=torch.long), "boxes": torch.zeros(0, 4)}
    assert len(L.repeat_targets([one], 4, 100)[0]["boxes"]) == 12
    capped, none = L.repeat_targets([one, empty], 4, 10)
    assert len(capped["boxes"]) == 9  # 10 proposals hold 3 copies of 3 lines
    assert torch.equal(capped["boxes"][3:6], one["boxes"]) and len(none["boxes"]) == 0


@pytest.mark.parametrize("arch,size", [("dfine", "n"), ("rtdetr_v2", "r18")])
def test_encoder_proposals_one_to_many(arch, size, monkeypatch):
    """k = 1 gives the criterion's own one-to-one loss of the proposals; k = 3 matches 3 proposals per
    line (3 lines, 10 proposals → 9 matches) and still trains."""
    seen = {}

    def capture(model):
        real = model.loss_function

        def wrapped(*args, **kwargs):
            seen["proposals"] = {
                "logits": kwargs["enc_topk_logits"].detach(),
                "pred_boxes": kwargs["enc_topk_bboxes"].detach().clamp(0, 1),
            }
            return real(*args, **kwargs)

        model.loss_function = wrapped
        model.loss_function.criterion = real.criterion
        return real

    model = tiny_detector(arch, size)
    real = capture(model)
    out = model(pixel_values=torch.rand(1, 3, 64, 64), labels=tiny_labels())
    alone = real.criterion(seen["proposals"], tiny_labels())
    assert {"loss_vfl_enc", "loss_bbox_enc", "loss_ciou_enc"} <= set(out.loss_dict)
    for key in ("loss_vfl", "loss_bbox", "loss_ciou"):
        torch.testing.assert_close(out.loss_dict[f"{key}_enc"].detach(), alone[key].detach())

    model = tiny_detector(arch, size, encoder_positives=3)
    real = capture(model)
    matches = []
    matcher = real.criterion.matcher
    match = matcher.forward
    monkeypatch.setattr(matcher, "forward", lambda o, t: matches.append(match(o, t)) or matches[-1])
    out = model(pixel_values=torch.rand(1, 3, 64, 64), labels=tiny_labels())
    assert len(matches[-1][0][0]) == 9 and len(set(matches[-1][0][0].tolist())) == 9
    assert all(len(m[0][0]) == 3 for m in matches[:-1])  # decoder layers stay one-to-one
    out.loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
