"""Model folders: their settings file (model_folder), the shipped models and their cached ONNX exports
(zoo), what a folder is (model_info) and the copy that ships (shipping)."""
