"""Pixels in and out of the models: decoding images and PDFs (io, inputs), the one letterbox of
pages and line crops (preprocess, line_preprocess, buckets, line_crops, line_band), boxes and the
detector's post-processing. Torch-free: the ONNX runtime uses all of it."""
